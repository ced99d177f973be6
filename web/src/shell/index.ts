// What a plugin's web module may use from the shell. Everything here is stable for plugin authors.
export type { ColumnDef } from '@tanstack/react-table';
export { createColumnHelper } from '@tanstack/react-table';
export { AuthFrame } from '../auth/auth-frame';
export { type Call, type Method, sessionCalls } from './api/calls';
export { ApiClient, encodeFilter, type FilterItem } from './api/client';
export { ApiError, errorText, listFields } from './api/errors';
export type * from './api/types';
export { type FormDialog, useFormDialog } from './form-dialog';
export { FirstNamespace, NamespaceNameField, useCreateNamespace } from './namespace-create';
export { memberRoles, type Permission, permissionFor, rolesAtLeast, rolesPhrase } from './permission-table';
export { useCan } from './permissions';
export { type Action, type Resource, useAction, useResource } from './resource';
export { Link, matchPath, Navigate, useLocation, useNavigate, useSearchParam } from './router';
export { emailProblem, type FieldRule, fieldRules, ruleProblem } from './rules';
export { useApi, useConsole, useUser } from './session';
export * from './slots';
export { Button, SelectField, Switch, TextArea, TextField } from './ui/controls';
export { CopyField } from './ui/copy';
export {
  DataTable,
  type PagedTableProps,
  type TableQuery,
  usePagedList,
  useTableQuery,
} from './ui/data-table';
export { ConfirmDialog, Dialog } from './ui/dialog';
export { Alert, Empty, ErrorState, Loading, useToast } from './ui/feedback';
export { icons } from './ui/icons';
export { Card, formatDate, formatRelative, PageHeader } from './ui/page';
export { ScrollFrame } from './ui/scroll-frame';
