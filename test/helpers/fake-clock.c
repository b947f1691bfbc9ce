// Moves a process's wall clock (CLOCK_REALTIME, gettimeofday, time) by an offset in ms that a
// test writes to a file at any time: the file named by FAKE_CLOCK_FILE holds a little-endian
// int64, read through a shared mapping on every call. Monotonic clocks are left alone. Loaded
// into redis-server with LD_PRELOAD (test/helpers/fake-clock.ts), so Redis's TIME, and with it
// every boundary the service counts by, is where a test puts it. (libfaketime does the same and
// much more, and crashes Debian's redis-server.)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static volatile const int64_t *offset_ms;
static int loaded;

static void load (void) {
  if (loaded) return;
  real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  const char *path = getenv("FAKE_CLOCK_FILE");
  if (path != NULL) {
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
      void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) offset_ms = (volatile const int64_t *)p;
      close(fd);
    }
  }
  loaded = 1;
}

static void shift (struct timespec *ts) {
  if (offset_ms == NULL) return;
  int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + *offset_ms * 1000000LL;
  ts->tv_sec = (time_t)(ns / 1000000000LL);
  ts->tv_nsec = (long)(ns % 1000000000LL);
}

int clock_gettime (clockid_t id, struct timespec *ts) {
  load();
  int r = real_clock_gettime(id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(ts);
  return r;
}

int gettimeofday (struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  int r = clock_gettime(CLOCK_REALTIME, &ts);
  if (r == 0 && tv != NULL) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return r;
}

time_t time (time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t != NULL) *t = ts.tv_sec;
  return ts.tv_sec;
}
