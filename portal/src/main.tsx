import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { takeTokenFromAddress } from './api/session';
import { App } from './App';
import './portal.css';

// Before anything renders: the token leaves the address bar and history at once.
takeTokenFromAddress();
createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
