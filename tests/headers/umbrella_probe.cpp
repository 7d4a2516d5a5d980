// The umbrella alone: tests/headers/check_umbrella.py reads its preprocessed text.
#include <nvtxpp/nvtxpp.hpp>
