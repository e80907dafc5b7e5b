// A for-in loop declares its variable with a type; an existing variable
// cannot be reused as the loop variable.
control C(inout bit<8> n) {
    bit<8> i = 20;
    apply {
        for (i in 1 .. 6) {
            n = n + i;
        }
    }
}
