/* Placeholder: replaced by the real unit tests for sig. */
#include "tap.h"

int
main(void)
{
	BAIL("t_sig not written yet");
}
