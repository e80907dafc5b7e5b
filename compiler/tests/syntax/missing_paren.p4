control C(inout bit<8> x) {
    apply {
        if (x == 1 {
            x = 2;
        }
    }
}
