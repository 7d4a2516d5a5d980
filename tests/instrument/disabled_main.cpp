// Built with NVTXPP_DISABLE and passed to nvtxpp_instrument(): must come out uninstrumented.
int twice(int x) { return x + x; }
int main(int argc, char**) { return twice(argc) == 2 ? 0 : 1; }
