/* Placeholder: replaced by the real unit tests for conf. */
#include "tap.h"

int
main(void)
{
	BAIL("t_conf not written yet");
}
