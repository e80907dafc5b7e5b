control C(inout bit<8> x) {
    apply {
        @atomic { x = 1; }
    }
}
