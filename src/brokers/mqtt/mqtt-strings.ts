/** An MQTT UTF-8 string (topic, user property, content type) is at most 65,535 bytes. */
export const MAX_MQTT_STRING_BYTES = 65_535;

/**
 * What MQTT 5 (1.5.4) forbids in a string (U+0000, lone surrogates) and what it lets a receiver close the
 * connection over (control characters U+0001..U+001F and U+007F..U+009F, Unicode noncharacters): Mosquitto
 * closes it, failing every publish in flight on the connection, so such a string is refused before it is sent.
 */
const UNSENDABLE =
  /[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[\ud83f\ud87f\ud8bf\ud8ff\ud93f\ud97f\ud9bf\ud9ff\uda3f\uda7f\udabf\udaff\udb3f\udb7f\udbbf\udbff][\udffe\udfff]/;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` encodes to well-formed UTF-8 (no lone surrogate, which Buffer would turn into U+FFFD). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** What keeps `value` from being an MQTT string, or undefined. */
export function mqttStringFault(value: string): string | undefined {
  if (UNSENDABLE.test(value)) return 'holds a control character, a Unicode noncharacter or a lone surrogate, which MQTT strings cannot carry';
  if (Buffer.byteLength(value) > MAX_MQTT_STRING_BYTES) return `is over ${MAX_MQTT_STRING_BYTES} bytes`;
  return undefined;
}

/**
 * What keeps `topic` from being an MQTT topic name to publish to, or undefined: wildcards (`+`, `#`), a leading `$`
 * (topics the broker keeps for itself, such as `$SYS`), empty levels (a leading, trailing or doubled `/`), or what
 * no MQTT string may hold.
 */
export function topicLevelsFault(topic: string): string | undefined {
  if (topic === '') return 'is empty';
  if (/[+#]/.test(topic)) return 'holds an MQTT wildcard (+ or #)';
  if (topic.startsWith('$')) return 'starts with $ (topics the broker keeps for itself, such as $SYS)';
  if (topic.split('/').some((level) => level === '')) return 'has an empty level (a leading, trailing or doubled /)';
  return mqttStringFault(topic);
}
