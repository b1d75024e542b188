/* fake_calls.h — a count of the fake driver's entry points called (fake_calls.c), so that
 * tests can bound the driver calls one execute makes without a GPU. */
#ifndef HIPDNN_TEST_FAKE_CALLS_H
#define HIPDNN_TEST_FAKE_CALLS_H

/* Counts one call of the entry point `name` (a string that lives as long as the process:
 * its __func__). */
void fake_called(const char* name);
#define FAKE_CALLED() fake_called(__func__)

#endif
