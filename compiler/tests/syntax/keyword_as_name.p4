struct s_t {
    bit<8> table;
}
