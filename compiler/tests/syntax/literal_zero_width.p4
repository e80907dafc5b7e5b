const bit<8> Z = 0w5;
