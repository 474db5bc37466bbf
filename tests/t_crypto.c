/* Placeholder: replaced by the real unit tests for crypto. */
#include "tap.h"

int
main(void)
{
	BAIL("t_crypto not written yet");
}
