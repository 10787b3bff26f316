"""RESP framing for the benchmark probes' own sockets (latency_probe.py, retrying_clients.py):
a request's bytes, and where the first reply to a GET ends."""


def command(*args):
    """The RESP array of bulk strings for one request."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else arg.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def reply_end(buffer):
    """The length of the first whole reply to a GET in `buffer` (bulk, nil, or a one-line
    reply such as an error), or 0 while it is not all there."""
    line_end = buffer.find(b"\r\n")
    if line_end < 0:
        return 0
    if buffer[:1] != b"$":
        return line_end + 2
    length = int(buffer[1:line_end])
    end = line_end + 2 + (length + 2 if length >= 0 else 0)
    return end if len(buffer) >= end else 0
