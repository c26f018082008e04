/** The commands of the CLI, as `outboxer help <command>` names them. */
export type CommandName =
  | 'sql'
  | 'migrate'
  | 'status'
  | 'relay'
  | 'dead list'
  | 'dead retry'
  | 'dead purge'
  | 'topics list'
  | 'topics pause'
  | 'topics resume'
  | 'destinations list'
  | 'destinations pause'
  | 'destinations resume'
  | 'pending list'
  | 'pending show'
  | 'pending delete';

/** What `outboxer help` can explain: a command, a command group, or the whole CLI (`main`). */
export type HelpTopic =
  | 'main'
  | 'sql'
  | 'migrate'
  | 'status'
  | 'relay'
  | 'dead'
  | 'dead list'
  | 'dead retry'
  | 'dead purge'
  | 'topics'
  | 'topics list'
  | 'topics pause'
  | 'topics resume'
  | 'destinations'
  | 'destinations list'
  | 'destinations pause'
  | 'destinations resume'
  | 'pending'
  | 'pending list'
  | 'pending show'
  | 'pending delete';

/**
 * What follows a usage error's message on stderr: the usage line of its command and where its options are
 * listed (`line`), the whole help (`full`), or nothing, the message naming the help itself (`none`).
 */
export type UsageShown = 'line' | 'full' | 'none';
