// The umbrella with heavy headers: check_umbrella.py must flag what they bring in.
#include <nvtxpp/memory.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>
