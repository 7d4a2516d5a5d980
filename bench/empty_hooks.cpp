// The floor of the build route's cost: -finstrument-functions' hooks that do nothing.
extern "C" {
__attribute__((no_instrument_function, noinline)) void __cyg_profile_func_enter(void*, void*) {
  __asm__ volatile("");
}
__attribute__((no_instrument_function, noinline)) void __cyg_profile_func_exit(void*, void*) {
  __asm__ volatile("");
}
}
