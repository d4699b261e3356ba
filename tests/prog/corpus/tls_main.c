/* Pointers only in the main thread's thread-local storage: an
 * initial-exec __thread variable and a pthread key's value (kept in the
 * thread descriptor): still reachable. */
#include <pthread.h>
#include "corpus.h"

__thread struct node *mine;

int main(void)
{
	pthread_key_t key;
	pthread_key_create(&key, NULL);
	mine = list(2);
	pthread_setspecific(key, list(3));
	return 0;
}
