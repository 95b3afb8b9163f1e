/* A shared library named like a transport plugin that is not one: it
 * exports a function, but no smd_transport_plugin_v1. */
__attribute__((visibility("default"))) int smd_test_not_a_plugin(void);

int smd_test_not_a_plugin(void) { return 42; }
