import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the service at /portal/ (server/http/portal.ts): hashed files under /portal/assets/, cached for a year. Two
// pages: the integrators' portal, and the operator console at /portal/operator/, whose code integrators never load.
export default defineConfig({
  base: '/portal/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rollupOptions: { input: { portal: 'index.html', operator: 'operator.html' } },
  },
});
