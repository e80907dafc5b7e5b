#pragma once
const bit<8> ONCE = 1;
