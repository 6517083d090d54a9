import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the service at /portal/ (server/http/portal.ts): hashed files under /portal/assets/, cached for a year.
export default defineConfig({
  base: '/portal/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, reportCompressedSize: false },
});
