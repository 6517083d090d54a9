import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { takeTokenFromAddress, watchAddressForLinks } from './api/session';
import { newQueryClient } from './query';
import './portal.css';

// Before anything renders: the token leaves the address bar and history at once.
takeTokenFromAddress();
watchAddressForLinks();
// The signed-out pages' client (asking for a link); a session has a client of its own (App.tsx).
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={newQueryClient()}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
