/* Placeholder: replaced by the real unit tests for store. */
#include "tap.h"

int
main(void)
{
	BAIL("t_store not written yet");
}
