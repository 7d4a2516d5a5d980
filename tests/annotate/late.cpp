// Loaded only through dlopen (as libannotate_plugin.so's dependency).
extern "C" int late_fn(int x) { return x + 100; }
