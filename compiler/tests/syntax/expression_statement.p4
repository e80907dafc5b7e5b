control C(inout bit<8> x) {
    apply {
        x + 1;
    }
}
