/* Placeholder: replaced by the real unit tests for pipeline. */
#include "tap.h"

int
main(void)
{
	BAIL("t_pipeline not written yet");
}
