"""Start moto's server with the fixes the local stack needs (each section
below says why) and one addition, a route that moves SQS message delays with
the local stack's clock (see ADVANCE_PATH). First, two fixes to its DynamoDB
TransactWriteItems.

moto (5.x) makes a transaction atomic by deep-copying every table the
transaction names -- once per item, including the table's whole stream
history -- and, when the transaction is cancelled, putting those copies back.
That costs O(items x all writes ever made) per transaction, which makes a
long-running local stack slower with every write, and restoring whole tables
also discards writes that other requests made meanwhile.

This launcher keeps moto's own transaction code and condition evaluation and
changes only how a cancelled transaction is undone:

* before the transaction, it records the current value of each key the
  transaction touches and the length of each touched table's stream;
* moto's whole-table copies are skipped (the copy step returns the live
  table, so moto's own restore is a no-op);
* when the transaction is cancelled, it writes back exactly those keys and
  truncates each stream to its recorded length, so a cancelled transaction
  leaves neither item changes nor stream records behind.

DynamoDB and DynamoDB Streams requests are serialised with one lock, so a
transaction is atomic with respect to every other request, as in DynamoDB,
and read-modify-write responses (ReturnValues) are consistent.

Usage: python3 moto_server.py [moto_server arguments...]
"""

import copy
import sys
import threading

from moto.dynamodb import models as ddb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table

_lock = threading.RLock()


class _CopyWithoutTables:
    """Stands in for the copy module inside moto's DynamoDB models."""

    def deepcopy(self, obj, memo=None):
        if isinstance(obj, Table):
            return obj  # skip the whole-table snapshot; we undo by key
        return copy.deepcopy(obj, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


ddb_models.copy = _CopyWithoutTables()

_original_transact = DynamoDBBackend.transact_write_items


def _key_of(table, op_type, op):
    if op_type == "Put":
        attrs = op["Item"]
        key = {table.hash_key_attr: attrs[table.hash_key_attr]}
        if table.range_key_attr is not None:
            key[table.range_key_attr] = attrs[table.range_key_attr]
        return key
    return op.get("Key")


def _transact_write_items(self, transact_items):
    with _lock:
        before = []  # (table name, key, original attributes or None)
        stream_len = {}
        for item in transact_items:
            try:
                op_type, op = next(iter(item.items()))
                name = op.get("TableName")
                table = self.tables.get(name)
                if table is None:
                    continue
                key = _key_of(table, op_type, op)
                if key is None:
                    continue
                current = self.get_item(name, key)
            except Exception:  # moto's own code reports malformed input
                continue
            original = copy.deepcopy(current.to_json()["Attributes"]) if current else None
            before.append((name, key, original))
            shard = getattr(table, "stream_shard", None)
            if shard is not None and name not in stream_len:
                stream_len[name] = len(shard.items)
        try:
            return _original_transact(self, transact_items)
        except Exception:
            for name, key, original in reversed(before):
                if original is None:
                    if self.get_item(name, key) is not None:
                        self.delete_item(name, key)
                else:
                    self.put_item(name, original)
            for name, n in stream_len.items():
                shard = self.tables[name].stream_shard
                if shard is not None:
                    del shard.items[n:]
            raise


DynamoDBBackend.transact_write_items = _transact_write_items

# Serialise whole DynamoDB and DynamoDB Streams requests. moto's response
# layer reads items outside the backend calls (for ReturnValues, for
# example), so locking backend methods alone would still let two
# concurrent "ADD n :1 ... UPDATED_OLD" calls return the same old value;
# and stream readers must not see a transaction that is being cancelled.
from moto.dynamodb.responses import DynamoHandler  # noqa: E402
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler  # noqa: E402

for _handler in (DynamoHandler, DynamoDBStreamsHandler):

    def _locked_call(self, __call=_handler.call_action):
        with _lock:
            return __call(self)

    _handler.call_action = _locked_call


# S3 event notifications: moto (5.2) writes eventTime in the server's local
# time without a zone ("2026-11-22T05:58:06.186219"); S3 sends UTC with a
# "Z". Send what S3 sends, so the signal handler parses moto's notifications
# exactly as it parses AWS's.
import datetime as _dt  # noqa: E402

from moto.s3 import notifications as _s3_notifications  # noqa: E402


class _UTCDateTime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return _dt.datetime.now(tz or _dt.timezone.utc)


_s3_notifications.datetime = _UTCDateTime
_s3_notifications._EVENT_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


# SQS: moto (5.2) reads the clock through datetime arithmetic (utcnow minus
# the epoch), and reads it for every message of a queue, delayed ones
# included, several times per request: to find the receivable messages on
# every receive and every time a long poll is woken (each send wakes every
# waiting poller), and to count the queue's messages by state, which it
# does for every message sent and received (a retention check reads all
# the queue's attributes). A work queue holding a few hundred long timers
# (SQS DelaySeconds up to 15 minutes, as Sleep steps use) then took 0.3 s
# to hand over a new message when idle, and tens of seconds under a test's
# load. The same selections, with the clock read from time.time():
import time as _time  # noqa: E402

from moto.sqs import models as _sqs_models  # noqa: E402

_unix_time, _unix_time_millis = _sqs_models.unix_time, _sqs_models.unix_time_millis
_sqs_models.unix_time = lambda dt=None: _time.time() if dt is None else _unix_time(dt)
_sqs_models.unix_time_millis = lambda dt=None: _time.time() * 1000.0 if dt is None else _unix_time_millis(dt)


def _receivable(self):
    now = _time.time() * 1000.0
    return [m for m in self._messages if m.visible_at < now and m.delayed_until <= now]


def _any_receivable(self):
    now = _time.time() * 1000.0
    return any(m.visible_at < now and m.delayed_until <= now for m in self._messages)


def _wait_for_messages(self, timeout):
    with self._messages_lock:
        self._messages_lock.wait_for(lambda: _any_receivable(self), timeout=timeout)


def _within_retention(self, queue_name, message):
    # moto builds every attribute of the queue (message counts included) to
    # read this one, once per message received.
    period = self.get_queue(queue_name).message_retention_period
    return period + message.sent_timestamp / 1000 > _time.time()


_sqs_models.Queue.messages = property(_receivable)
_sqs_models.Queue.wait_for_messages = _wait_for_messages
_sqs_models.SQSBackend.is_message_valid_based_on_retention_period = _within_retention

# SQS: moto (5.2) deletes a message by rebuilding the queue's message list
# from a pass over it, outside the lock under which a send appends: a
# message sent between the pass and the assignment is lost, though its send
# succeeded. Under a fan-out (the router sending batches of ten while the
# workers delete the messages they handled) 8 of a batch of 10 accepted
# messages were never received, and the run waited for the sweeper. The
# delete holds the queue's lock.
_delete_message = _sqs_models.Queue.delete_message


def _delete_message_locked(self, receipt_handle):
    with self._messages_lock:
        return _delete_message(self, receipt_handle)


_sqs_models.Queue.delete_message = _delete_message_locked

# SQS: the local stack's clock. The local stack can move its clock forward
# (POST /local/clock, stack.Stack.AdvanceClock): the handlers then decide
# with the later time and the schedule pump fires the schedules that became
# due. Timers up to 15 minutes (Sleep steps, retry backoffs, timeouts) are
# SQS message delays, which moto counts in real time; this route moves them
# by the same amount, so a delayed message falls due when the stack's clock
# says it is due, as it would after that much real time in SQS:
#
#   POST /_maestro/sqs/advance
#   {"region": "us-east-1", "queue_urls": [...], "advance_ms": N}
#
# shortens the remaining delay of every delayed message of those queues by
# N ms (a message becomes receivable when none remains) and answers
# {"delayed": <messages still delayed>, "next_due_ms": <the least remaining
# delay, null when none>}; advance_ms 0 only reports. It moves delays only:
# a received message's visibility timeout is its handler's, which is still
# running in real time.
import json as _json  # noqa: E402

from moto.moto_server.werkzeug_app import DomainDispatcherApplication  # noqa: E402

ADVANCE_PATH = "/_maestro/sqs/advance"


def _advance_delays(region, queue_urls, advance_ms):
    delayed, next_due = 0, None
    for url in queue_urls:
        account, name = url.rstrip("/").split("/")[-2:]
        queue = _sqs_models.sqs_backends[account][region].get_queue(name)
        with queue._messages_lock:
            now = _time.time() * 1000.0
            for m in queue._messages:
                if m.delayed_until <= now:
                    continue
                m.delayed_until -= advance_ms
                left = m.delayed_until - now
                if left > 0:
                    delayed += 1
                    next_due = left if next_due is None else min(next_due, left)
            queue._messages_lock.notify_all()  # wake long polls
    return {"delayed": delayed, "next_due_ms": None if next_due is None else int(next_due) + 1}


def _answer(start_response, status, body):
    data = _json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


_dispatch = DomainDispatcherApplication.__call__


def _dispatch_with_clock(self, environ, start_response):
    if environ.get("PATH_INFO") != ADVANCE_PATH:
        return _dispatch(self, environ, start_response)
    if environ.get("REQUEST_METHOD") != "POST":
        return _answer(start_response, "405 Method Not Allowed", {"message": "POST only"})
    try:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        req = _json.loads(environ["wsgi.input"].read(size) or b"{}")
        advance_ms = req["advance_ms"]
        if not isinstance(advance_ms, int) or advance_ms < 0:
            raise ValueError("advance_ms: want a whole number of milliseconds >= 0")
        body = _advance_delays(req["region"], req["queue_urls"], advance_ms)
    except Exception as e:  # a bad request or a queue that does not exist
        return _answer(start_response, "400 Bad Request", {"message": "%s: %s" % (type(e).__name__, e)})
    return _answer(start_response, "200 OK", body)


DomainDispatcherApplication.__call__ = _dispatch_with_clock

# SQS: moto 5.2 keeps an entry's MessageSystemAttributes (AWSTraceHeader,
# the X-Ray trace SQS carries) on SendMessage but drops them on
# SendMessageBatch, where the router sends a run's messages with its trace.
# Its batch calls send_message once per entry, in the entries' order; each
# call gets its entry's attributes there, before the message is queued (set
# on the message after the batch, a receive on another thread could take it
# without them: a test saw a run_step message without its trace).
_send_message = _sqs_models.SQSBackend.send_message
_send_message_batch = _sqs_models.SQSBackend.send_message_batch
_batch_entries = threading.local()


def _send_message_with_entry_attributes(self, *args, **kwargs):
    pending = getattr(_batch_entries, "pending", None)
    if pending is not None:
        entry = next(pending, {})
        if kwargs.get("system_attributes") is None:
            kwargs["system_attributes"] = entry.get("MessageSystemAttributes")
    return _send_message(self, *args, **kwargs)


def _send_message_batch_with_system_attributes(self, queue_name, entries):
    _batch_entries.pending = iter(list(entries.values()))
    try:
        return _send_message_batch(self, queue_name, entries)
    finally:
        _batch_entries.pending = None


_sqs_models.SQSBackend.send_message = _send_message_with_entry_attributes
_sqs_models.SQSBackend.send_message_batch = _send_message_batch_with_system_attributes

# moto picks each request's service under one server-wide lock, listing its
# own package directory on disk to do it (every request, every service);
# the list never changes while the server runs.
from moto import backends as _backends  # noqa: E402

_moto_modules = tuple(_backends.list_of_moto_modules())
_backends.list_of_moto_modules = lambda: _moto_modules

# ECS: moto 5.2 fails every Fargate (awsvpc) RunTask: the task's attachment
# reads the network interface's private_dns_name, which moto's EC2 network
# interfaces lack. Give them EC2's default name for their private address.
from moto.ec2.models.elastic_network_interfaces import NetworkInterface  # noqa: E402

if not hasattr(NetworkInterface, "private_dns_name"):
    NetworkInterface.private_dns_name = property(
        lambda self: "ip-%s.ec2.internal" % (self.private_ip_address or "0.0.0.0").replace(".", "-")
    )

# ECS: a task's containers report cpu and memory as strings in ECS's API;
# moto copies the task definition's numbers, which the Go SDK refuses.
from moto.ecs import models as _ecs_models  # noqa: E402

_container_init = _ecs_models.Container.__init__


def _container_init_with_strings(self, task_def):
    _container_init(self, task_def)
    for attr in ("cpu", "memory"):
        value = getattr(self, attr, None)
        if value is not None and not isinstance(value, str):
            setattr(self, attr, str(value))


_ecs_models.Container.__init__ = _container_init_with_strings

# Batch: without Docker, moto's default Batch backend cannot run a job and
# logs a failure for each; its Docker-free backend marks submitted jobs
# succeeded instead. The local stack follows jobs through the state-change
# events it is sent (as EventBridge would send them), not moto's statuses.
from moto.core.config import default_user_config  # noqa: E402

default_user_config["batch"]["use_docker"] = False


if __name__ == "__main__":
    from moto.server import main

    main(sys.argv[1:])
