// A compound assignment evaluates its left side once: a call there is refused.
extern bit<32> pick();
header h_t { bit<8> a; }
control C(inout h_t[4] s) {
    apply { s[pick()].a += 1; }
}
