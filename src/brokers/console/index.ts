export { createConsolePublisher, type ConsolePublisherOptions } from './console-publisher.js';
