import { describe, expect, it } from 'vitest';
import { ConnectionStateTracker } from '../../src/brokers/connection-state.js';

describe('ConnectionStateTracker (Publisher.connectionState of the broker publishers)', () => {
  it('is connecting before the first connection, connected once up, disconnected once closed', () => {
    const state = new ConnectionStateTracker();
    expect(state.state).toBe('connecting');
    state.attempting();
    expect(state.state).toBe('connecting');
    state.connected();
    expect(state.state).toBe('connected');
    state.closed();
    expect(state.state).toBe('disconnected');
    state.connected(); // a late event after close changes nothing
    expect(state.state).toBe('disconnected');
  });

  it('a failed first attempt is disconnected, and so are the attempts after it until one succeeds', () => {
    const state = new ConnectionStateTracker();
    state.attempting();
    state.attemptFailed();
    expect(state.state).toBe('disconnected');
    state.attempting();
    expect(state.state).toBe('disconnected');
    state.connected();
    expect(state.state).toBe('connected');
  });

  it('after a loss: disconnected, connecting during the first attempt, disconnected again once an attempt fails', () => {
    const state = new ConnectionStateTracker();
    state.attempting();
    state.connected();
    state.lost();
    expect(state.state).toBe('disconnected');
    state.attempting();
    expect(state.state).toBe('connecting');
    state.attemptFailed();
    expect(state.state).toBe('disconnected');
    state.attempting();
    expect(state.state).toBe('disconnected');
    state.connected();
    expect(state.state).toBe('connected');
  });

  it('a client that reconnects by itself: a second attempt while one runs means the first failed', () => {
    const state = new ConnectionStateTracker();
    state.attempting();
    state.connected();
    state.lost();
    state.attempting();
    expect(state.state).toBe('connecting');
    state.attempting();
    expect(state.state).toBe('disconnected');
    state.connected();
    expect(state.state).toBe('connected');
  });
});
