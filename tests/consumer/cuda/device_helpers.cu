// Device code in a second .cu file: with separable compilation, kernels.cu calls it across files.
#ifdef CONSUMER_SEPARABLE
__device__ float twice(float x) { return 2.0f * x; }
#endif
