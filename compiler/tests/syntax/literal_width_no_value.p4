const bit<8> X = 8w;
