const bit<8> B = 0b1021;
