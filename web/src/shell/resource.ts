import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { errorText } from './api/errors';

export interface Resource<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Loads data for a screen and keeps loading, error and data apart so every screen can show all three. */
export function useResource<T>(load: () => Promise<T>, deps: DependencyList): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to load again
  useEffect(() => {
    let live = true;
    setLoading(true);
    setError(null);
    loadRef.current().then(
      (value) => {
        if (!live) return;
        setData(value);
        setLoading(false);
      },
      (reason: unknown) => {
        if (!live) return;
        setError(errorText(reason));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload };
}

export interface Action {
  pending: boolean;
  error: string | null;
  clearError: () => void;
  /** Runs the task; resolves true when it succeeded, and keeps the error text when it failed. */
  run: (task: () => Promise<unknown>) => Promise<boolean>;
}

export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (task: () => Promise<unknown>) => {
    setPending(true);
    setError(null);
    try {
      await task();
      return true;
    } catch (reason) {
      setError(errorText(reason));
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  const clearError = useCallback(() => setError(null), []);
  return { pending, error, run, clearError };
}
