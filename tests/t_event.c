/* Placeholder: replaced by the real unit tests for event. */
#include "tap.h"

int
main(void)
{
	BAIL("t_event not written yet");
}
