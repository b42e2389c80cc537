/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo's stand-in for the parts of glibc's support/ library that
   glibc's tst-rwlock* tests use: the test driver (a child process with a
   time limit), failure recording, the check helpers, the x* wrappers and
   two timespec helpers.  Written for libbravo; it only mimics the
   interfaces (names, arguments, exit statuses: 0 pass, 1 fail, 77
   unsupported).  */
#include <support/shim.h>
#include <support/check.h>
#include <support/timespec.h>
#include <support/xthread.h>
#include <support/xtime.h>

#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../lib/test_util.h"

/* Shared with the test's child processes, so a failure recorded in any of
   them counts.  */
int test_verbose;
static int *failure_flag;
static int local_failure;

void
support_record_failure (void)
{
  if (failure_flag != NULL)
    __atomic_store_n (failure_flag, 1, __ATOMIC_RELAXED);
  else
    local_failure = 1;
}

static int
failure_recorded (void)
{
  return local_failure
         || (failure_flag != NULL
             && __atomic_load_n (failure_flag, __ATOMIC_RELAXED));
}

void
shim_fail (int exit_now, const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  fflush (stdout);
  printf ("error: %s:%d: ", file, line);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  support_record_failure ();
  if (exit_now)
    exit (1);
}

void
shim_compare_failed (const char *file, int line,
                     const char *left_expr, long long left,
                     const char *right_expr, long long right)
{
  shim_fail (0, file, line, "%s == %s: %lld != %lld",
             left_expr, right_expr, left, right);
}

/* ---- the driver ---- */

static volatile sig_atomic_t alarm_fired;

static void
on_alarm (int sig)
{
  (void) sig;
  alarm_fired = 1;
}

static int
result (int status)
{
  if (status == 0 && failure_recorded ())
    return 1;
  return status;
}

int
shim_test_main (int argc, char **argv, int (*test) (void), int timeout)
{
  /* The lock under test is the one the runner preloaded (or glibc's):
     a run that lost its preload fails instead of testing glibc.  */
  rwlock_lib_require (argv[0]);

  double factor = 1.0;
  const char *env = getenv ("TIMEOUTFACTOR");
  if (env != NULL && strtod (env, NULL) > 0)
    factor = strtod (env, NULL);
  unsigned int limit = (unsigned int) (timeout * factor + 0.999);

  void *p = mmap (NULL, sizeof (int), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED)
    failure_flag = p;

  int direct = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--direct") == 0)
      direct = 1;
    else if (strcmp (argv[i], "--verbose") == 0)
      test_verbose++;
  if (direct)
    return result (test ());

  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid < 0)
    {
      perror ("fork");
      return 1;
    }
  if (pid == 0)
    exit (result (test ()));

  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;     /* no SA_RESTART: waitpid returns EINTR */
  sigaction (SIGALRM, &sa, NULL);
  alarm (limit);

  int status;
  for (;;)
    {
      if (waitpid (pid, &status, 0) == pid)
        break;
      if (errno == EINTR && alarm_fired)
        {
          kill (pid, SIGKILL);
          waitpid (pid, &status, 0);
          printf ("Timed out: killed the child process after %u s\n", limit);
          return 1;
        }
      if (errno != EINTR)
        {
          perror ("waitpid");
          return 1;
        }
    }
  alarm (0);
  if (WIFSIGNALED (status))
    {
      printf ("Didn't expect signal from child: got `%s'\n",
              strsignal (WTERMSIG (status)));
      return 1;
    }
  return result (WEXITSTATUS (status));
}

/* ---- x* wrappers: end the test on error ---- */

static void
check_rc (const char *what, int rc)
{
  if (rc != 0)
    shim_fail (1, __FILE__, __LINE__, "%s failed: %s", what, strerror (rc));
}

pthread_t
xpthread_create (pthread_attr_t *attr, void *(*fn) (void *), void *arg)
{
  pthread_t thr;
  check_rc ("pthread_create", pthread_create (&thr, attr, fn, arg));
  return thr;
}

void *
xpthread_join (pthread_t thr)
{
  void *ret;
  check_rc ("pthread_join", pthread_join (thr, &ret));
  return ret;
}

void
xpthread_barrier_init (pthread_barrier_t *b, pthread_barrierattr_t *attr,
                       unsigned int count)
{
  check_rc ("pthread_barrier_init", pthread_barrier_init (b, attr, count));
}

int
xpthread_barrier_wait (pthread_barrier_t *b)
{
  int rc = pthread_barrier_wait (b);
  if (rc != PTHREAD_BARRIER_SERIAL_THREAD)
    check_rc ("pthread_barrier_wait", rc);
  return rc == PTHREAD_BARRIER_SERIAL_THREAD;
}

void
xpthread_mutex_lock (pthread_mutex_t *m)
{
  check_rc ("pthread_mutex_lock", pthread_mutex_lock (m));
}

void
xpthread_mutex_unlock (pthread_mutex_t *m)
{
  check_rc ("pthread_mutex_unlock", pthread_mutex_unlock (m));
}

void
xpthread_rwlockattr_init (pthread_rwlockattr_t *a)
{
  check_rc ("pthread_rwlockattr_init", pthread_rwlockattr_init (a));
}

void
xpthread_rwlockattr_setkind_np (pthread_rwlockattr_t *a, int kind)
{
  check_rc ("pthread_rwlockattr_setkind_np",
            pthread_rwlockattr_setkind_np (a, kind));
}

void
xpthread_rwlock_init (pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
  check_rc ("pthread_rwlock_init", pthread_rwlock_init (l, a));
}

void
xpthread_rwlock_rdlock (pthread_rwlock_t *l)
{
  check_rc ("pthread_rwlock_rdlock", pthread_rwlock_rdlock (l));
}

void
xpthread_rwlock_wrlock (pthread_rwlock_t *l)
{
  check_rc ("pthread_rwlock_wrlock", pthread_rwlock_wrlock (l));
}

void
xpthread_rwlock_unlock (pthread_rwlock_t *l)
{
  check_rc ("pthread_rwlock_unlock", pthread_rwlock_unlock (l));
}

void
xpthread_rwlock_destroy (pthread_rwlock_t *l)
{
  check_rc ("pthread_rwlock_destroy", pthread_rwlock_destroy (l));
}

static void *
delayed_exit_thread (void *arg)
{
  struct timespec ts = { .tv_sec = (time_t) (long) arg, .tv_nsec = 0 };
  while (nanosleep (&ts, &ts) != 0 && errno == EINTR)
    ;
  exit (0);
}

void
delayed_exit (int seconds)
{
  /* The thread takes none of the signals meant for the test.  */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, &old);
  pthread_t thr = xpthread_create (NULL, delayed_exit_thread,
                                   (void *) (long) seconds);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  pthread_detach (thr);
}

/* ---- time ---- */

/* Used by the tests that stress.h is forced into.  */
unsigned int shim_stress_sleep (unsigned int seconds);
int shim_stress_nanosleep (const struct timespec *req, struct timespec *rem);

static double
stress_scale (void)
{
  const char *env = getenv ("GLIBC_STRESS_SCALE");
  double f = env != NULL ? strtod (env, NULL) : 1.0;
  return f > 0 ? f : 1.0;
}

int
shim_stress_nanosleep (const struct timespec *req, struct timespec *rem)
{
  double s = (req->tv_sec + req->tv_nsec / 1e9) * stress_scale ();
  struct timespec ts;
  ts.tv_sec = (time_t) s;
  ts.tv_nsec = (long) ((s - (double) ts.tv_sec) * 1e9);
  while (nanosleep (&ts, &ts) != 0)
    if (errno != EINTR)
      return -1;
  if (rem != NULL)
    rem->tv_sec = rem->tv_nsec = 0;
  return 0;
}

unsigned int
shim_stress_sleep (unsigned int seconds)
{
  struct timespec ts = { .tv_sec = seconds, .tv_nsec = 0 };
  shim_stress_nanosleep (&ts, NULL);
  return 0;
}

void
xclock_gettime (clockid_t clock, struct timespec *ts)
{
  if (clock_gettime (clock, ts) != 0)
    shim_fail (1, __FILE__, __LINE__, "clock_gettime (%d): %s",
               (int) clock, strerror (errno));
}

struct timespec
timespec_add (struct timespec a, struct timespec b)
{
  struct timespec r;
  r.tv_sec = a.tv_sec + b.tv_sec;
  r.tv_nsec = a.tv_nsec + b.tv_nsec;
  if (r.tv_nsec >= 1000000000)
    {
      r.tv_sec++;
      r.tv_nsec -= 1000000000;
    }
  return r;
}

void
shim_timespec_now_or_after (const char *file, int line, clockid_t clock,
                            struct timespec ts)
{
  struct timespec now;
  xclock_gettime (clock, &now);
  if (now.tv_sec < ts.tv_sec
      || (now.tv_sec == ts.tv_sec && now.tv_nsec < ts.tv_nsec))
    shim_fail (0, file, line,
               "clock %d reads %lld.%09ld, before the expected %lld.%09ld",
               (int) clock, (long long) now.tv_sec, now.tv_nsec,
               (long long) ts.tv_sec, ts.tv_nsec);
}
