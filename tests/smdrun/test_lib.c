/* The library needs_lib.c links to (exported despite -fvisibility=hidden). */
__attribute__((visibility("default"))) int smdrun_test_lib_answer(void) { return 42; }
