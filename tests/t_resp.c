/* Placeholder: replaced by the real unit tests for resp. */
#include "tap.h"

int
main(void)
{
	BAIL("t_resp not written yet");
}
