import mysql from 'mysql2/promise';

/**
 * The statements a `mysql`/`mariadb` client sends for a script: it ends a statement at the current delimiter (`;`
 * until a `DELIMITER //` line changes it), outside quotes, and drops the `DELIMITER` lines themselves. Enough for
 * the scripts `outboxer sql` prints (whole-line `--` comments, which the client drops, and no escaped delimiters).
 */
export function mysqlClientStatements(script: string): string[] {
  const statements: string[] = [];
  let delimiter = ';';
  let current = '';
  for (const line of script.split('\n')) {
    if (/^\s*--/.test(line)) continue;
    const directive = /^DELIMITER\s+(\S+)\s*$/i.exec(line);
    if (directive?.[1] !== undefined && current.trim() === '') {
      delimiter = directive[1];
      continue;
    }
    current += `${line}\n`;
    let end = endOf(current, delimiter);
    while (end !== undefined) {
      const statement = current.slice(0, end).trim();
      if (statement !== '') statements.push(statement);
      current = current.slice(end + delimiter.length);
      end = endOf(current, delimiter);
    }
  }
  if (current.trim() !== '') statements.push(current.trim());
  return statements;
}

/** Where `delimiter` first occurs outside single or double quotes, or undefined. */
function endOf(text: string, delimiter: string): number | undefined {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (text.startsWith(delimiter, i)) return i;
  }
  return undefined;
}

/** Applies a script as a DBA's `mysql` client would: statement by statement, on a connection of its own. */
export async function applyMysqlScript(url: string, script: string): Promise<void> {
  const connection = await mysql.createConnection({ uri: url });
  try {
    for (const statement of mysqlClientStatements(script)) await connection.query(statement);
  } finally {
    await connection.end();
  }
}
