"""Reads N messages from a RabbitMQ queue with pika (not outboxer's client) and prints one JSON line each.

Usage: amqp_reader.py <amqp-url> <queue> <count>. Body bytes are printed as hex, header values as pika decodes
them (str for text, hex for bytes), so the test compares exactly what a Python consumer gets.
"""
import json
import sys
import time

import pika


def plain(value):
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    return value


def main():
    url, queue, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    connection = pika.BlockingConnection(pika.URLParameters(url))
    channel = connection.channel()
    deadline = time.monotonic() + 20
    got = 0
    while got < count:
        method, properties, body = channel.basic_get(queue=queue, auto_ack=True)
        if method is None:
            if time.monotonic() > deadline:
                sys.exit(f"only {got} of {count} messages in {queue}")
            connection.sleep(0.05)
            continue
        got += 1
        print(json.dumps({
            "routing_key": method.routing_key,
            "body_hex": body.hex(),
            "content_type": properties.content_type,
            "message_id": properties.message_id,
            "type": properties.type,
            "app_id": properties.app_id,
            "delivery_mode": properties.delivery_mode,
            "headers": {name: plain(value) for name, value in (properties.headers or {}).items()},
        }), flush=True)
    connection.close()


main()
