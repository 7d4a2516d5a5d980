#pragma once

// The C++ standard each file was compiled as, in years: 2017, 2020.
#define CONSUMER_STD (static_cast<int>(__cplusplus / 100))

int cuda_side(int step);  // kernels.cu
int cpp_side(int step);   // main.cpp
