// Opened with dlopen by annotate_app; calls into libannotate_late.so through its PLT.
extern "C" int late_fn(int x);
extern "C" int plugin_run(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += late_fn(i);
  return s;
}
