extern Checker {
    Checker();
    abstract bool check(in bit<8> x);
}
