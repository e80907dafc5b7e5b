const bit<8> UNGUARDED = 1;
