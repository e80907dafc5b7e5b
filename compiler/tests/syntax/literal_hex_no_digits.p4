const bit<16> ETH = 0x;
