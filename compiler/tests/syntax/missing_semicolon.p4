header h_t {
    bit<8> a;
}

const bit<8> X = 5
const bit<8> Y = 6;
