/*
 * job_submit_schedmate.c - Slurm job_submit plugin: asks the SchedMate
 * agent (`schedmate slurm`) over a local UNIX socket for the estimate of
 * the job being submitted and records it in the job's comment (and, when
 * the agent says so, its time limit).
 *
 * It must never block or crash slurmctld: one request, one reply line,
 * a hard deadline (SCHEDMATE_DEADLINE_MS, default 50 ms) over connect,
 * write and read together; on any failure or timeout the job is accepted
 * unchanged.  Slow work (extraction, history search) is the agent's.
 *
 * Socket: $SCHEDMATE_AGENT_SOCKET in slurmctld's environment, else
 * /run/schedmate/agent.sock.  Request: one JSON object and a newline:
 *   {"op":"estimate","uid":N,"name":S,"work_dir":S,"script":S,
 *    "argv":[S...],"partition":S,"tres_per_node":S,"tres_per_job":S,
 *    "min_nodes":N}
 * (argv: the script's arguments, without the script itself; strings that
 * Slurm did not set are empty).
 * Reply: "OK <time_limit_minutes or -> <comment>\n" or "NO <reason>\n".
 * The time limit is applied only to a job submitted without one; the
 * comment is appended to the user's own ("user text | schedmate: ...").
 *
 * Kept in Slurm's own (kernel) style, as a shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

const char plugin_name[] = "SchedMate job_submit plugin";
const char plugin_type[] = "job_submit/schedmate";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Exported by libslurmfull: strings in job_desc are Slurm-allocated. */
extern char *slurm_xstrdup(const char *str);
extern void slurm_xfree(void **ptr);
extern void slurm_debug(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#define MAX_REQ (256 * 1024)
#define MAX_SCRIPT (64 * 1024)

static int deadline_ms = 50;

int init(void)
{
	const char *d = getenv("SCHEDMATE_DEADLINE_MS");

	if (d && atoi(d) > 0 && atoi(d) <= 5000)
		deadline_ms = atoi(d);
	return SLURM_SUCCESS;
}

int fini(void)
{
	return SLURM_SUCCESS;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends s as a JSON string; returns the new length or -1 if full. */
static int put_str(char *buf, int len, int cap, const char *s, int max)
{
	const unsigned char *p = (const unsigned char *) (s ? s : "");

	if (len + 2 >= cap)
		return -1;
	buf[len++] = '"';
	for (; *p && max-- > 0; p++) {
		if (len + 7 >= cap)
			return -1;
		if (*p == '"' || *p == '\\') {
			buf[len++] = '\\';
			buf[len++] = *p;
		} else if (*p < 0x20) {
			len += snprintf(buf + len, cap - len, "\\u%04x", *p);
		} else {
			buf[len++] = *p;
		}
	}
	buf[len++] = '"';
	return len;
}

/* Waits for fd to be ready for events until the deadline. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left = deadline - now_ms();

	if (left <= 0)
		return -1;
	return poll(&p, 1, (int) left) == 1 ? 0 : -1;
}

/* One request/reply exchange with the agent; 0 and the reply in out. */
static int ask_agent(const char *req, int len, char *out, int cap)
{
	long long deadline = now_ms() + deadline_ms;
	const char *path = getenv("SCHEDMATE_AGENT_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, off = 0, got = 0;

	if (!path)
		path = "/run/schedmate/agent.sock";
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 &&
	    (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline)))
		goto fail;
	while (off < len) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (n > 0)
			off += n;
		else if (n < 0 && errno != EAGAIN)
			goto fail;
		else if (wait_fd(fd, POLLOUT, deadline))
			goto fail;
	}
	while (got < cap - 1 && !memchr(out, '\n', got)) {
		ssize_t n;
		if (wait_fd(fd, POLLIN, deadline))
			goto fail;
		n = recv(fd, out + got, cap - 1 - got, 0);
		if (n <= 0)
			goto fail;
		got += n;
	}
	close(fd);
	out[got] = '\0';
	return memchr(out, '\n', got) ? 0 : -1;
fail:
	close(fd);
	out[got] = '\0';
	return -1;
}

/* Appends ,"key": and the string; returns the new length or -1. */
static int put_member(char *buf, int len, const char *key, const char *s,
		      int max)
{
	if (len <= 0 || len + (int) strlen(key) + 8 >= MAX_REQ)
		return -1;
	len += snprintf(buf + len, MAX_REQ - len, ",\"%s\":", key);
	return put_str(buf, len, MAX_REQ, s, max);
}

/* The request line for one job; returns its length or -1. */
static int build_request(char *req, const job_desc_msg_t *job_desc,
			 uint32_t uid)
{
	int len = snprintf(req, MAX_REQ, "{\"op\":\"estimate\",\"uid\":%u",
			   uid);

	len = put_member(req, len, "name", job_desc->name, 4096);
	len = put_member(req, len, "work_dir", job_desc->work_dir, 4096);
	len = put_member(req, len, "partition", job_desc->partition, 1024);
	len = put_member(req, len, "tres_per_node", job_desc->tres_per_node,
			 1024);
	len = put_member(req, len, "tres_per_job", job_desc->tres_per_job,
			 1024);
	if (len > 0 && job_desc->min_nodes != NO_VAL && len + 32 < MAX_REQ)
		len += snprintf(req + len, MAX_REQ - len, ",\"min_nodes\":%u",
				job_desc->min_nodes);
	if (len > 0 && len + 16 < MAX_REQ)
		len += snprintf(req + len, MAX_REQ - len, ",\"argv\":[");
	/* argv[0] is the script itself. */
	for (uint32_t i = 1; len > 0 && job_desc->argv && i < job_desc->argc &&
	     i < 64; i++) {
		if (i > 1 && len + 2 < MAX_REQ)
			req[len++] = ',';
		len = put_str(req, len, MAX_REQ, job_desc->argv[i], 4096);
	}
	if (len > 0 && len + 2 < MAX_REQ)
		req[len++] = ']';
	len = put_member(req, len, "script", job_desc->script, MAX_SCRIPT);
	if (len > 0 && len + 3 < MAX_REQ)
		len += snprintf(req + len, MAX_REQ - len, "}\n");
	else
		len = -1;
	return len;
}

int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
	char *req = malloc(MAX_REQ), reply[1024], *nl, *comment;
	uint32_t uid = submit_uid;
	int len;
	long limit;

	(void) err_msg;
	reply[0] = '\0';
	if (!req)
		return SLURM_SUCCESS;
	if (job_desc->user_id != NO_VAL)
		uid = job_desc->user_id;
	len = build_request(req, job_desc, uid);
	if (len <= 0 || ask_agent(req, len, reply, sizeof(reply)) ||
	    strncmp(reply, "OK ", 3)) {
		if (len > 0 && strncmp(reply, "NO ", 3) == 0 &&
		    (nl = strchr(reply, '\n')))
			*nl = '\0';
		slurm_debug("job_submit/schedmate: %s; job accepted unchanged",
			    len <= 0 ? "request too large" :
			    strncmp(reply, "NO ", 3) == 0 ? reply :
			    "no answer from the agent in time");
		free(req);
		return SLURM_SUCCESS;	/* accept unchanged */
	}
	free(req);
	if ((nl = strchr(reply, '\n')))
		*nl = '\0';
	limit = strtol(reply + 3, &comment, 10);
	if (comment == reply + 3)	/* "-": no time limit */
		comment = strchr(reply + 3, ' ');
	else if (limit > 0 && limit <= 52560000 &&
		 job_desc->time_limit == NO_VAL)	/* at most 100 years */
		job_desc->time_limit = (uint32_t) limit;
	if (comment && *comment == ' ' && comment[1]) {
		/* Keep the user's own comment in front of ours. */
		char both[2048];
		const char *mine = comment + 1;
		if (job_desc->comment && job_desc->comment[0]) {
			snprintf(both, sizeof(both), "%s | %s", job_desc->comment,
				 mine);
			mine = both;
		}
		if (job_desc->comment)
			slurm_xfree((void **) &job_desc->comment);
		job_desc->comment = slurm_xstrdup(mine);
	}
	return SLURM_SUCCESS;
}

int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid)
{
	(void) job_desc;
	(void) job_ptr;
	(void) submit_uid;
	return SLURM_SUCCESS;
}
