import type { Page } from 'playwright-core';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What a screenshot of `clip` shows, pixel row by pixel row. */
export interface Ink {
  width: number;
  height: number;
  /** Per pixel row: how many pixels are light (luminance above 100 of 255), i.e. text on the dark terminal. */
  lit: number[];
  /** Per pixel row: how many pixels differ from `background` by more than 6 in some channel. */
  foreign: number[];
}

/**
 * Reads the pixels of a region as the screen shows them: a real screenshot (so what the compositor painted, not
 * what the DOM says), decoded by the browser's own PNG decoder on a canvas.
 */
export async function inkOf(page: Page, clip: Box, background: [number, number, number]): Promise<Ink> {
  const png = (await page.screenshot({ clip })).toString('base64');
  return (await page.evaluate(`(async () => {
    const img = new Image();
    img.src = 'data:image/png;base64,${png}';
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, img.width, img.height).data;
    const bg = ${JSON.stringify(background)};
    const lit = [];
    const foreign = [];
    for (let y = 0; y < img.height; y++) {
      let l = 0;
      let f = 0;
      for (let x = 0; x < img.width; x++) {
        const i = (y * img.width + x) * 4;
        if (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2] > 100) l++;
        if (Math.abs(d[i] - bg[0]) > 6 || Math.abs(d[i + 1] - bg[1]) > 6 || Math.abs(d[i + 2] - bg[2]) > 6) f++;
      }
      lit.push(l);
      foreign.push(f);
    }
    return { width: img.width, height: img.height, lit, foreign };
  })()`)) as Ink;
}
