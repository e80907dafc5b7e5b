const bit<8> X = 1;
// café in Latin-1
const bit<8> Y = 2;
