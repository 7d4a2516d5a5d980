# Seconds each long test took in scripts/test.sh's builds on the 2-core CI machine (a run at -j2;
# columns: Release, ASan+UBSan, TSan), as ctest COST (tests/CMakeLists.txt, nvtxpp_test_costs):
# ctest starts the costliest first, which a fresh build directory, with no timings of its own yet
# (Testing/Temporary/CTestCostData.txt), could not know; the longest tests would then start last
# and leave cores idle at the end of each stage. Only the order depends on these figures: refresh
# them when tests change much (scripts/refresh_test_costs.py, after scripts/test.sh, from the
# builds' CTestCostData.txt). A test not listed costs 0.
set(NVTXPP_TEST_COSTS
  capture.call_table                               0.0   4.0  11.8
  capture.compare_nsys                             3.9   3.4   2.9
  capture.diff_as_measured                         0.2   1.1   2.9
  capture.diff_calls                               0.3   0.8   2.1
  capture.diff_gate                                0.3   1.0   2.2
  capture.diff_group                               0.3   1.0   2.3
  capture.diff_pooled                              0.3   1.0   3.3
  capture.diff_relative                            0.4   1.4   2.6
  capture.diff_same                                0.3   0.8   2.2
  capture.diff_slowdown                            0.3   0.7   2.0
  capture.fake_hang                                5.1   5.2   5.2
  capture.flight_bad_input                         0.1   0.7   2.1
  capture.flight_cooldown                          2.5   2.5   3.0
  capture.flight_crash                             0.2   0.7   3.6
  capture.flight_dump                              0.6   4.3   6.8
  capture.flight_dump_idle_thread                  0.4   1.2   2.0
  capture.flight_trigger_pattern                   2.0   2.1   2.3
  capture.flight_window                            0.8   1.3   2.2
  capture.fork_busy                                3.5   8.8  13.2
  capture.heavy_refused_flight                     3.3   5.2   7.1
  capture.job_sigkill                             18.1  18.2  19.6
  capture.job_torchrun                             1.8   2.2   3.4
  capture.job_trigger                              1.9   2.4   2.3
  capture.job_two_jobs                             2.2   3.1   2.6
  capture.memory                                   0.9   5.1   0.0
  capture.memory_threads                           0.6   3.1   0.0
  capture.merge_damaged                            0.1   0.7   2.4
  capture.merge_empty_processes                    0.2   0.7   2.3
  capture.merge_json                               0.5   2.3   3.5
  capture.merge_json_bad                           0.4   2.4   3.0
  capture.merge_json_dumps                         0.4   1.6   3.4
  capture.merge_json_gpu                           0.2   0.6   2.2
  capture.merge_parallel                           0.7   2.2   4.6
  capture.order                                    4.9  10.4  16.5
  capture.ranks_env                                0.2   1.1   5.7
  capture.sample_capture                           1.3   1.4   2.4
  capture.shared_killed                            1.5   2.4   2.4
  capture.shared_stale_entries                     1.8   2.4   3.4
  capture.sigterm_many                             1.0   3.0   3.9
  capture.sqlite                                   0.9   2.7   6.5
  capture.top_exit_watched                         1.3   1.5   1.8
  capture.top_json                                 2.0   2.1   2.3
  capture.top_launch                               2.9   3.3   3.4
  capture.top_names                                3.3   5.1   6.2
  capture.top_once                                 2.2   2.5   2.5
  capture.top_screen                               2.3   2.6   2.9
  capture.top_unchanged                            1.5   1.8   2.0
  capture.window_time_fork                         1.4   1.4   2.0
  consumer_cuda_cmake_17_gcc                       3.8   0.0   0.0
  consumer_cuda_cmake_17_separable_gcc             4.0   0.0   0.0
  consumer_cuda_cmake_20_clang                     5.6   0.0   0.0
  consumer_cuda_cmake_20_gcc                       3.7   0.0   0.0
  consumer_cuda_direct_17_clang                    3.7   0.0   0.0
  consumer_cuda_direct_20_gcc                      2.6   0.0   0.0
  consumer_cuda_nvcc_17_clang                      4.9   0.0   0.0
  consumer_cuda_nvcc_17_gcc                        3.9   0.0   0.0
  consumer_cuda_nvcc_17_noexcept_nortti_gcc        3.8   0.0   0.0
  consumer_cuda_nvcc_20_clang                      8.3   0.0   0.0
  consumer_cuda_nvcc_20_gcc                        4.5   0.0   0.0
  consumer_cuda_nvcc_20_noexcept_nortti_clang      6.0   0.0   0.0
  consumer_cuda_nvcc_20_werror_clang               6.3   0.0   0.0
  consumer_cuda_nvcc_20_werror_gcc                 4.3   0.0   0.0
  consumer_cuda_opt_20_clang                       5.5   0.0   0.0
  consumer_cuda_opt_20_gcc                         3.8   0.0   0.0
  consumer_cuda_prop_20_clang                      5.5   0.0   0.0
  consumer_cuda_prop_20_gcc                        4.2   0.0   0.0
  consumer_cuda_subdir_cmake_20_gcc                4.1   0.0   0.0
  consumer_cuda_subdir_opt_20_clang                5.4   0.0   0.0
  headers_standalone                               3.5   0.0   0.0
  instrument_threads                               0.2   1.2   2.9
  nvtxpp_testing_recorder                          1.6   6.8   0.0
  nvtxpp_testing_recorder_no_tsc                   1.2   7.6   0.0
  perf_alloc_recorder                              0.3   2.4   0.0
  test_threads                                     0.3   1.9   5.0
  consumer_cuda_install                           30.0   0.0   0.0
)

# How many tests run at once (PROCESSORS; scripts/test.sh runs ctest with four slots a core and
# two more). Under ThreadSanitizer most capture tests sleep much of their time (each TSan-built
# process with threads left sleeps at its exit: atexit_sleep_ms, 250 ms in scripts/test.sh): a
# test there takes one
# slot, unless it keeps a core or more busy (CPU time at least about half its wall time: listed
# here), which takes four. In the Release and ASan+UBSan builds every test takes four, unless it
# mostly waits (NVTXPP_WAITING_TESTS), which takes one. So no more tests that keep a core busy
# run at once than there are cores, and those that wait fill the slots they leave.
set(NVTXPP_TSAN_BUSY_TESTS
  # diff's tests judge programs' timings: beside three others on a core they cried wolf
  # (capture.diff_gate, a fresh clone's TSan stage): each keeps its core
  capture.diff_same capture.diff_one_run capture.diff_slowdown capture.diff_calls
  capture.diff_new_gone capture.diff_group capture.diff_pooled capture.diff_gate capture.diff_nsys
  capture.diff_bad capture.diff_nothing_common capture.diff_svg capture.diff_summary_group
  capture.diff_relative
  capture.call_table capture.job_two_jobs capture.exit_busy
  capture.ring_threads capture.job_trigger capture.job_hang capture.shared_stale_entries
  capture.flight_sigkill instrument_threads capture.sqlite capture.merge_json_bad
  capture.compare_nsys capture.sigterm_many capture.shared_sigkill_program capture.order
  capture.shared_killed capture.flight_dump_idle_thread capture.merge_signal capture.flight_window
  capture.shared_planted_files capture.flight_api_call capture.flight_api_call_off
  capture.flight_api_call_detached
  capture.merge_parallel_errors test_threads capture.merge_json capture.sample_capture
  capture.sample_edge capture.sample_raise capture.sample_raise_job capture.sample_driver
  capture.heavy_sample_capture capture.heavy_sample_raise
  # 100,000 names made and read: the program and top each keep a core
  capture.top_names)
# Open MPI's teardown after a killed rank (the 10 s grace of job_tests.py), a hang timeout.
set(NVTXPP_WAITING_TESTS capture.job_sigkill capture.fake_hang)
