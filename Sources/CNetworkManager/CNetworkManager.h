#include <NetworkManager.h>
