import { StringDecoder } from 'node:string_decoder';

/**
 * Cuts a byte stream into whole lines. A multi-byte character split across two chunks is
 * decoded whole; `\r\n` ends a line like `\n`; blank lines are skipped.
 * NOTE: feed it Buffers (a child's stdout without setEncoding); a string chunk is taken as
 * already decoded and must not follow a Buffer that ended mid-character.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  push(chunk: Buffer | string): string[] {
    const text = this.rest + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    return clean(parts);
  }

  /** The last line when the stream ended without a newline. */
  flush(): string[] {
    const text = this.rest + this.decoder.end();
    this.rest = '';
    return clean([text]);
  }
}

function clean(lines: string[]): string[] {
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)).filter((l) => l.trim() !== '');
}
