export { createMqttPublisher } from './mqtt-publisher.js';
export { MQTT_PUBLISHER_DEFAULTS, resolveMqttPublisherOptions, type MqttPublisherOptions, type ResolvedMqttPublisherOptions } from './options.js';
export { MqttUserProperties, mqttTopicOf } from './wire.js';
export { MqttReasonCodes } from './reason-codes.js';
